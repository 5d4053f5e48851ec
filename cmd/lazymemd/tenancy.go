package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/lazymem/lazymem/engine"
)

// Tenancy: with --keys, every request but the probes carries a bearer
// token; the key it matches says which agents the request may read or
// write and what it may do (its scopes). The tenant comes from the
// credential, never from the body: a body naming an agent outside the key
// is refused (403) before anything is read or written, and a record of
// another tenant answers exactly as a missing one.

// tenant is the credential a request was made with.
type tenant struct {
	name   string          // the key's name; "" for the daemon's single token or no authentication
	all    bool            // every agent ("agents": ["*"], admin keys only; the single token)
	agents map[string]bool // the agents it may touch, unless all
	list   []string        // agents, sorted
	scopes [scopeAdmin + 1]bool
	// quota bounds each of the key's agents (live records, text bytes);
	// zero fields are unlimited. It rides on the agents' scoped handles
	// (engine.DB.Agent), so every write path of the key obeys it.
	quota engine.Quota
}

// limited reports whether the tenant's agents have a quota.
func (t *tenant) limited() bool { return t.quota.MaxRecords > 0 || t.quota.MaxBytes > 0 }

// quotaText is the tenant's quota as a keys file writes it.
func (t *tenant) quotaText() string {
	var s []string
	if t.quota.MaxRecords > 0 {
		s = append(s, fmt.Sprintf("records %d", t.quota.MaxRecords))
	}
	if t.quota.MaxBytes > 0 {
		s = append(s, fmt.Sprintf("bytes %d", t.quota.MaxBytes))
	}
	return strings.Join(s, ", ")
}

// openTenant is the tenant of a daemon without --keys: one credential (or
// none) that may do everything.
var openTenant = &tenant{all: true, scopes: [...]bool{true, true, true, true, true}}

func (t *tenant) has(sc scope) bool { return t.scopes[sc] }

// allows reports whether the tenant may touch agent's records.
func (t *tenant) allows(agent string) bool { return t.all || t.agents[agent] }

func (t *tenant) scopeList() string {
	var s []string
	for sc := scopeRead; sc <= scopeAdmin; sc++ {
		if t.scopes[sc] {
			s = append(s, sc.String())
		}
	}
	return strings.Join(s, ", ")
}

type tenantKey struct{}

// tenantOf is the request's tenant; openTenant when none was set (no
// --keys).
func tenantOf(r *http.Request) *tenant {
	if t, ok := r.Context().Value(tenantKey{}).(*tenant); ok {
		return t
	}
	return openTenant
}

func withTenant(r *http.Request, t *tenant) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), tenantKey{}, t))
}

// keyring is a loaded --keys file.
type keyring struct {
	keys []keyEntry
}

type keyEntry struct {
	hash [sha256.Size]byte
	t    *tenant
}

// keysFile is the JSON of --keys:
//
//	{"keys": [{"name": "team-a", "token_sha256": "<64 hex>",
//	           "agents": ["a1", "a2"], "scopes": ["read", "write"],
//	           "quota": {"records": 100000, "bytes": 50000000}}]}
//
// quota is optional; each of its fields bounds each of the key's agents
// (absent or 0: unlimited).
type keysFile struct {
	Keys []struct {
		Name        string   `json:"name"`
		TokenSHA256 string   `json:"token_sha256"`
		Agents      []string `json:"agents"`
		Scopes      []string `json:"scopes"`
		Quota       *struct {
			Records int64 `json:"records"`
			Bytes   int64 `json:"bytes"`
		} `json:"quota"`
	} `json:"keys"`
}

// loadKeys reads and checks a keys file; an error names the key's field
// and what is wrong with it.
func loadKeys(file string) (*keyring, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: --keys: %w", errKeys, err)
	}
	return parseKeys(b)
}

func parseKeys(b []byte) (*keyring, error) {
	var f keysFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", errKeys, err)
	}
	if len(f.Keys) == 0 {
		return nil, fmt.Errorf("%w: keys: want at least one key", errKeys)
	}
	kr := &keyring{}
	names, hashes := map[string]bool{}, map[[sha256.Size]byte]bool{}
	for i, k := range f.Keys {
		field := fmt.Sprintf("keys[%d]", i)
		if k.Name == "" {
			return nil, fmt.Errorf("%w: %s.name: empty", errKeys, field)
		}
		if names[k.Name] {
			return nil, fmt.Errorf("%w: %s.name: %q named twice", errKeys, field, k.Name)
		}
		names[k.Name] = true
		var e keyEntry
		h, err := hex.DecodeString(k.TokenSHA256)
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("%w: %s.token_sha256: want the token's SHA-256 as 64 hex digits (sha256sum), got %d characters", errKeys, field, len(k.TokenSHA256))
		}
		copy(e.hash[:], h)
		if hashes[e.hash] {
			return nil, fmt.Errorf("%w: %s.token_sha256: the same token as another key", errKeys, field)
		}
		hashes[e.hash] = true
		t := &tenant{name: k.Name, agents: map[string]bool{}}
		if len(k.Scopes) == 0 {
			return nil, fmt.Errorf("%w: %s.scopes: want at least one of read, write, forget, admin", errKeys, field)
		}
		for j, name := range k.Scopes {
			sc, ok := parseScope(name)
			if !ok {
				return nil, fmt.Errorf("%w: %s.scopes[%d]: %q is not read, write, forget or admin", errKeys, field, j, name)
			}
			t.scopes[sc] = true
		}
		if len(k.Agents) == 0 {
			return nil, fmt.Errorf("%w: %s.agents: want at least one agent (or \"*\" with the admin scope)", errKeys, field)
		}
		for j, a := range k.Agents {
			switch {
			case a == "*" && !t.scopes[scopeAdmin]:
				return nil, fmt.Errorf("%w: %s.agents[%d]: \"*\" (every agent) needs the admin scope", errKeys, field, j)
			case a == "*":
				t.all = true
			case a == "":
				return nil, fmt.Errorf("%w: %s.agents[%d]: empty", errKeys, field, j)
			default:
				t.agents[a] = true
			}
		}
		if q := k.Quota; q != nil {
			switch {
			case q.Records < 0:
				return nil, fmt.Errorf("%w: %s.quota.records: %d is negative (0 or absent: unlimited)", errKeys, field, q.Records)
			case q.Bytes < 0:
				return nil, fmt.Errorf("%w: %s.quota.bytes: %d is negative (0 or absent: unlimited)", errKeys, field, q.Bytes)
			case t.all && (q.Records > 0 || q.Bytes > 0):
				// The quota rides on per-agent handles; a key of
				// every agent writes through the store itself.
				return nil, fmt.Errorf("%w: %s.quota: a key of every agent (\"*\") cannot have a quota; list its agents", errKeys, field)
			}
			t.quota = engine.Quota{MaxRecords: q.Records, MaxBytes: q.Bytes}
		}
		t.list = slices.Sorted(func(yield func(string) bool) {
			for a := range t.agents {
				if !yield(a) {
					return
				}
			}
		})
		e.t = t
		kr.keys = append(kr.keys, e)
	}
	return kr, nil
}

// lookup finds the key of a bearer token. Every key's hash is compared,
// in constant time, whatever matches: the time taken says nothing about
// which key, or how much of one, the token matched.
func (kr *keyring) lookup(token string) *tenant {
	h := sha256.Sum256([]byte(token))
	var found *tenant
	for i := range kr.keys {
		if subtle.ConstantTimeCompare(h[:], kr.keys[i].hash[:]) == 1 {
			found = kr.keys[i].t
		}
	}
	return found
}

// bearer is the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return tok, ok && tok != ""
}

// authorized rejects requests without a valid credential, when the daemon
// has one (--keys or --token-file), and names the request's tenant. The
// probes stay open for load balancers and supervisors, and the
// inspector's page for browsers.
func (s *server) authorized(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if publicPath(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		if kr := s.keys.Load(); kr != nil {
			tok, _ := bearer(r)
			t := kr.lookup(tok)
			if t == nil {
				s.unauthorized(w, r, "lazymemd --keys")
				return
			}
			if ri, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
				ri.key = t.name
			}
			h.ServeHTTP(w, withTenant(r, t))
			return
		}
		if s.token != "" {
			got := []byte(r.Header.Get("Authorization"))
			if subtle.ConstantTimeCompare(got, []byte("Bearer "+s.token)) != 1 {
				s.unauthorized(w, r, "lazymemd --token-file")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (s *server) unauthorized(w http.ResponseWriter, r *http.Request, flag string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="lazymemd"`)
	s.fail(w, r, http.StatusUnauthorized, apiError{Code: "unauthorized",
		Message: fmt.Sprintf("missing or wrong \"Authorization: Bearer <token>\" header (%s)", flag)})
}

// forbiddenAgent is the 403 of a request naming an agent outside its key.
func forbiddenAgent(t *tenant, field, agent string) apiError {
	return apiError{Code: "forbidden", Field: field,
		Message: fmt.Sprintf("%s: the key %q may not use the agent %q (its agents: %s)", field, t.name, agent, strings.Join(t.list, ", "))}
}

// clampAgents checks a query's agents against the tenant: every agent it
// names must be the tenant's; a query naming none searches all of the
// tenant's agents (a key of one agent need not name it). It returns nil
// or the 403 to answer.
func clampAgents(t *tenant, agent *string, agents *[]string) *apiError {
	if *agent != "" && !t.allows(*agent) {
		e := forbiddenAgent(t, "query.agent", *agent)
		return &e
	}
	for i, a := range *agents {
		if !t.allows(a) {
			e := forbiddenAgent(t, fmt.Sprintf("query.agents[%d]", i), a)
			return &e
		}
	}
	if *agent == "" && len(*agents) == 0 && !t.all && len(t.list) > 0 {
		*agent = t.list[0]
		*agents = slices.Clone(t.list[1:])
	}
	return nil
}
