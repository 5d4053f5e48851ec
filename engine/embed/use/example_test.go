package use_test

import (
	"context"
	"fmt"
	"log"

	"github.com/lazymem/lazymem/engine/embed/use"
)

// The model directory comes from engine/embed/use/fetch.sh. (Not run by go
// test: the model files are not in the repository.)
func ExampleNew() {
	u, err := use.New(".cache/use-lite", use.Options{})
	if err != nil {
		log.Fatal(err) // names the missing or corrupt file
	}
	vecs, err := u.Embed(context.Background(), []string{
		"We decided to use PostgreSQL for the database.",
		"What database did we pick?",
	})
	if err != nil {
		log.Fatal(err)
	}
	var cos float32
	for k := range vecs[0] {
		cos += vecs[0][k] * vecs[1][k] // unit vectors: the dot is the cosine
	}
	fmt.Println(u.Name(), u.Dim(), cos > 0.5)
}
