package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseAliases(t *testing.T) {
	for _, tc := range []struct {
		text  string
		name  string
		other string // one of the names before the marker
	}{
		{"老黑本名何文斌，皮肤黑所以叫老黑。", "何文斌", "老黑"},
		{"我老公高远在远洋货轮上当轮机工程师，朋友们都叫他大高。", "大高", "高远"},
		{"赵一鸣这孩子聪明但是粗心，外号叫小博士，上课特别爱接话。", "小博士", "赵一鸣"},
		{"英语组的Tom老师也遇到过这种事，他本名唐明，教了十年书了。", "唐明", "Tom"},
		{"陶艺老师叫林薇，英文名叫Vivian。", "Vivian", "林薇"},
		{"儿子高乐乐，七岁，小名叫小满，因为是小满那天生的。", "小满", "高乐乐"},
		{"Robert goes by Bob at work.", "Bob", "Robert"},
	} {
		got := parseAliases(tc.text)
		if !slices.ContainsFunc(got, func(p aliasPair) bool { return p.name == tc.name && slices.Contains(p.others, tc.other) }) {
			t.Errorf("parseAliases(%q) = %v: want %s for %s", tc.text, got, tc.name, tc.other)
		}
	}
	for _, text := range []string{"我们今天叫他们一起吃饭的时候很开心。", "今天天气很好。", "the real deal"} {
		if got := parseAliases(text); len(got) != 0 {
			t.Errorf("parseAliases(%q) = %v: want none", text, got)
		}
	}
}

// TestAliasRecall checks a question naming a person by the name a turn
// defined finds the turns naming the nickname, and that the expansion
// goes from the rarely used name to the common one only.
func TestAliasRecall(t *testing.T) {
	defer func(was bool) { useAliases = was }(useAliases)
	useAliases = true
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 11, 1, 20, 0, 0, 0, time.UTC)
	texts := []string{
		"老黑本名何文斌，皮肤黑所以叫老黑。",
		"今天去超市买了点水果。",
		"很顺利，老黑的老婆是他们公司的同事，叫唐蜜。",
		"老黑下周要来深圳出差。",
	}
	var recs []Record
	for i, s := range texts {
		recs = append(recs, Record{Agent: "a", Session: "s1", Role: "user", Text: s, Time: t0.Add(time.Duration(i) * 24 * time.Hour)})
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	res, err := db.Recall(ctx, Query{Agent: "a", Text: "何文斌的老婆叫什么？", K: 4, Mode: ModeSparse})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stats.Text, "老黑") {
		t.Fatalf("searched %q: want 老黑 added", res.Stats.Text)
	}
	found := false
	for _, m := range res.Memories {
		found = found || strings.Contains(m.Text, "唐蜜")
	}
	if !found {
		t.Fatalf("the wife's turn not recalled: %v", res.Memories)
	}
	res, err = db.Recall(ctx, Query{Agent: "a", Text: "老黑什么时候来？", K: 4, Mode: ModeSparse})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stats.Text, "何文斌") {
		t.Fatalf("searched %q: the common name should not add the rare one", res.Stats.Text)
	}
	// A later definition is found without a rebuild.
	if _, err := db.AppendBatch(ctx, []Record{{Agent: "a", Session: "s2", Role: "user", Text: "同事王建国，大家都叫他老王。", Time: t0.Add(10 * 24 * time.Hour)},
		{Agent: "a", Session: "s3", Role: "user", Text: "老王今天请我吃饭。", Time: t0.Add(11 * 24 * time.Hour)},
		{Agent: "a", Session: "s4", Role: "user", Text: "老王的车坏了。", Time: t0.Add(12 * 24 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	res, err = db.Recall(ctx, Query{Agent: "a", Text: "王建国请我吃了什么？", K: 4, Mode: ModeSparse})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stats.Text, "老王") {
		t.Fatalf("searched %q: want 老王 added after the append", res.Stats.Text)
	}
}
