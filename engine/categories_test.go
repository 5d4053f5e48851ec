package engine

import (
	"slices"
	"testing"
)

func TestCategoriesParse(t *testing.T) {
	cs, err := parseCategories(categoriesText)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 40 {
		t.Fatalf("%d categories, want at least 40", len(cs))
	}
	for _, bad := range []string{"pets dog cat", "pets: dog, , cat", ": dog", "pets: guinea pig", "pets:"} {
		if _, err := parseCategories(bad); err == nil {
			t.Errorf("%q: parsed", bad)
		}
	}
}

func TestCategoryInstances(t *testing.T) {
	cs := theCategories()
	cases := []struct {
		text      string
		want, not []string
	}{
		{"What pets does Melanie have?", []string{"dog", "cat", "hamster"}, []string{"狗", "karate"}},
		{"Which martial arts has John done?", []string{"kickboxing", "taekwondo"}, []string{"dog"}},
		{"What does she do in her spare time?", []string{"painting", "hiking"}, nil},
		{"你养了什么宠物？", []string{"狗", "猫"}, []string{"dog"}},
		{"她有什么爱好", []string{"钓鱼", "画画"}, []string{"fishing"}},
		// An instance the question holds is not added again.
		{"Besides her dog, what pets does she have?", []string{"cat"}, []string{"dog"}},
		// A category named but not asked for.
		{"How did the pets react to the fireworks?", nil, []string{"dog"}},
		{"医生除了建议运动还给了什么治疗？", nil, []string{"跑步"}},
		{"最喜欢的运动是什么？", []string{"跑步"}, nil},
		// No category named: nothing.
		{"When did Caroline go to the LGBTQ support group?", nil, []string{"dog", "painting"}},
		// A word that only contains a category word does not name it.
		{"How was the carpet cleaning?", nil, []string{"dog"}},
	}
	for _, c := range cases {
		got := categoryInstances(cs, c.text)
		if len(c.want) == 0 && len(got) > 0 {
			t.Errorf("%q: instances %v, want none", c.text, got)
		}
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: instances %v lack %q", c.text, got, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("%q: instances %v hold %q", c.text, got, w)
			}
		}
	}
}
