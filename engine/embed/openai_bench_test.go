package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// cannedResponse is an embeddings response of n random unit-ish vectors of
// length dim, as the OpenAI API formats it.
func cannedResponse(n, dim int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: "bench"}
	for i := 0; i < n; i++ {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64() * 0.03)
		}
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
	}
	b, _ := json.Marshal(resp)
	return b
}

func BenchmarkDecodeResponse(b *testing.B) {
	for _, dim := range []int{384, 1536} {
		for _, n := range []int{1, 96} {
			b.Run("dim="+strconv.Itoa(dim)+"/n="+strconv.Itoa(n), func(b *testing.B) {
				data := cannedResponse(n, dim, 1)
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := decodeResponse(data, n, dim); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkOpenAI measures the client's own cost per Embed call against a
// local server that answers with a canned body (no network latency, no
// model): request encoding, HTTP over loopback, response decoding.
func BenchmarkOpenAI(b *testing.B) {
	for _, c := range []struct{ texts, batch, conc, dim int }{{1, 96, 4, 1536}, {960, 96, 4, 1536}, {960, 96, 1, 1536}} {
		name := fmt.Sprintf("dim=%d/texts=%d/batch=%d/conc=%d", c.dim, c.texts, c.batch, c.conc)
		b.Run(name, func(b *testing.B) {
			bodies := map[int][]byte{}
			for _, n := range []int{c.batch, c.texts % c.batch, c.texts} {
				if n > 0 && n <= c.batch {
					bodies[n] = cannedResponse(n, c.dim, uint64(n))
				}
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req openAIRequest
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					http.Error(w, err.Error(), 400)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(bodies[len(req.Input)])
			}))
			defer srv.Close()
			e, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL, Model: "bench", BatchSize: c.batch, Concurrency: c.conc, APIKeyEnv: "LAZYMEM_TEST_NO_SUCH_KEY"})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			in := make([]string, c.texts)
			rng := rand.New(rand.NewPCG(3, 3))
			for i := range in {
				in[i] = benchText(rng, 200)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(c.texts)/b.Elapsed().Seconds(), "texts/s")
		})
	}
}
