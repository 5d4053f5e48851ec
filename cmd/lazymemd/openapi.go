package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lazymem/lazymem/docs"
)

// The OpenAPI description is written in YAML (docs/openapi.yaml, embedded)
// and served as JSON, which every OpenAPI tool reads. It is converted
// once, on first request.
var (
	specOnce sync.Once
	specJSON []byte
	specErr  error
)

// loadSpec parses the embedded description.
func loadSpec() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("lazymem: docs/openapi.yaml: %w", err)
	}
	return doc, nil
}

func openAPIJSON() ([]byte, error) {
	specOnce.Do(func() {
		doc, err := loadSpec()
		if err != nil {
			specErr = err
			return
		}
		specJSON, specErr = json.Marshal(doc)
	})
	return specJSON, specErr
}

// openapi serves the API's OpenAPI description as JSON.
func (s *server) openapi(w http.ResponseWriter, r *http.Request) {
	b, err := openAPIJSON()
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}
