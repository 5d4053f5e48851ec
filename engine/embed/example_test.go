package embed_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lazymem/lazymem/engine/embed"
)

func ExampleNewHash() {
	h, err := embed.NewHash(embed.HashOptions{}) // Dim 384
	if err != nil {
		fmt.Println(err)
		return
	}
	vs, err := h.Embed(context.Background(), []string{
		"we decided the connection pool size should be 32",
		"what did we decide about the connection pool?",
		"my daughter loves painting sunsets",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	fmt.Println(h.Name(), len(vs[0]))
	fmt.Println(dot(vs[1], vs[0]) > dot(vs[1], vs[2]))
	// Output:
	// hash-v3-d384 384
	// true
}

func ExampleNewOpenAI() {
	// Any OpenAI-compatible server; here a local Ollama. The key, when one is
	// needed, comes from $OPENAI_API_KEY (or the variable named by APIKeyEnv).
	e, err := embed.NewOpenAI(embed.OpenAIOptions{
		BaseURL: "http://localhost:11434/v1",
		Model:   "nomic-embed-text",
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	fmt.Println(e.Name(), e.URL())
	// Output:
	// openai:nomic-embed-text http://localhost:11434/v1/embeddings
}
