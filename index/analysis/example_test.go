package analysis_test

import (
	"fmt"

	"github.com/lazymem/lazymem/index/analysis"
)

func ExampleAnalyzer_AppendTokens() {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, tk := range a.AppendTokens(nil, "Raised HikariCP maximumPoolSize for sess_abc123; 数据库连接池 🚀") {
		fmt.Print(tk.Pos, ":", tk.Term, " ")
	}
	fmt.Println()
	// Output:
	// 0:rais 1:hikaricp 1:hikari 2:cp 3:maximumpools 3:maximum 4:pool 5:size 7:sess_abc123 7:sess 8:abc123 9:数 9:数据 10:据 10:据库 11:库 11:库连 12:连 12:连接 13:接 13:接池 14:池
}

func ExampleParseQuery() {
	q, err := analysis.ParseQuery(`pool size "HikariCP config" -chitchat tag:db -tag:noise agent:a1`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("text=%q excluded=%q where=%v not=%v\n", q.Text(), q.Excluded(), q.Where(), q.Not())

	_, err = analysis.ParseQuery(`pool "size`)
	fmt.Println(err)
	// Output:
	// text="pool size HikariCP config" excluded=["chitchat"] where=map[agent:[a1] tag:[db]] not=map[tag:[noise]]
	// lazymem: query: unclosed quote at byte 5
}
