package consolidate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lazymem/lazymem/engine/consolidate"
)

func ExampleLabel() {
	for _, tag := range consolidate.Label("好，那我们决定产品上线时间定在十二月十五号。赵强负责通知运维。") {
		fmt.Printf("%s: %s (owner %q)\n", tag.Type, tag.Content, tag.Owner)
	}
	fmt.Println(len(consolidate.Label("如果我们决定推迟，谁去通知客户？")))
	// Output:
	// decision: 产品上线时间定在十二月十五号 (owner "")
	// action_item: 通知运维 (owner "赵强")
	// 0
}

func ExampleRules() {
	beijing := time.FixedZone("CST", 8*3600)
	said := time.Date(2026, 12, 1, 14, 0, 0, 0, beijing) // a Tuesday
	c, err := consolidate.NewRules(consolidate.Options{})
	if err != nil {
		panic(err)
	}
	units, err := c.Consolidate(context.Background(), consolidate.Input{
		Agent: "meeting",
		Records: []consolidate.Selected{{
			Turn: consolidate.Turn{ID: 42, Time: said, Speaker: "赵强", Role: "engineer",
				Text: "我负责通知运维，下周一下午两点前发出变更单。"},
		}},
	})
	if err != nil {
		panic(err)
	}
	for _, u := range units {
		a := u.ActionItems[0]
		fmt.Println(u.Type, a.Owner, a.Due.Format("2006-01-02 15:04"), u.SourceIDs)
	}
	// Output:
	// action_item 赵强 2026-12-07 14:00 [42]
}

func ExampleLink() {
	t0 := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	stored := []consolidate.Unit{{ID: 1, Type: consolidate.TypeDecision, Topic: "上线时间",
		Content: "上线时间定在十二月十五号", SourceIDs: []uint64{10}, Time: t0}}
	fresh := []consolidate.Unit{{ID: 2, Type: consolidate.TypeDecision, Topic: "产品上线时间",
		Content: "产品上线时间推迟到十二月二十二号", SourceIDs: []uint64{90}, Time: t0.Add(time.Hour)}}
	rewrite, err := consolidate.Link(stored, fresh)
	if err != nil {
		panic(err)
	}
	fmt.Println(rewrite, stored[0].SupersededBy, fresh[0].Supersedes, fresh[0].Live())
	// Output:
	// [1] 2 [1] true
}
