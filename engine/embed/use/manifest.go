package use

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Limits on what a model.json may declare, so a corrupt or hostile file
// cannot make the loader allocate without bound.
const (
	maxWeights     = 1 << 16
	maxWeightElems = 1 << 28 // 1 GiB of float32 per weight
	maxTotalBytes  = 1 << 31
	maxRank        = 8
)

// Manifest is the part of a TF.js graph model's model.json this package
// reads: the graph's node names and ops (to check the graph is the one the
// forward pass implements) and the weights manifest (which bytes of which
// shard hold which constant).
type Manifest struct {
	Nodes  []Node
	Groups []WeightGroup
}

// Node is one node of the graph.
type Node struct {
	Name  string   `json:"name"`
	Op    string   `json:"op"`
	Input []string `json:"input"`
}

// WeightGroup is a list of weights stored back to back across the
// concatenation of its shard files, in order.
type WeightGroup struct {
	Paths   []string     `json:"paths"`
	Weights []WeightSpec `json:"weights"`
}

// WeightSpec describes one weight of a group.
type WeightSpec struct {
	Name         string          `json:"name"`
	Shape        []int           `json:"shape"`
	Dtype        string          `json:"dtype"`
	Quantization json.RawMessage `json:"quantization,omitempty"`
}

// elems is the number of elements of the weight (1 for a scalar).
func (w *WeightSpec) elems() int {
	n := 1
	for _, d := range w.Shape {
		n *= d
	}
	return n
}

// ParseManifest parses and checks model.json: every shard path a plain file
// name, every weight named once, of a supported dtype (float32 or int32,
// unquantized) and a bounded shape.
func ParseManifest(data []byte) (*Manifest, error) {
	var raw struct {
		Topology struct {
			Node []Node `json:"node"`
		} `json:"modelTopology"`
		WeightsManifest []WeightGroup `json:"weightsManifest"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: model.json: %v", ErrCorrupt, err)
	}
	if len(raw.Topology.Node) == 0 {
		return nil, fmt.Errorf("%w: model.json: no modelTopology.node: not a TF.js graph model", ErrCorrupt)
	}
	if len(raw.WeightsManifest) == 0 {
		return nil, fmt.Errorf("%w: model.json: empty weightsManifest", ErrCorrupt)
	}
	seen := make(map[string]bool)
	count, total := 0, 0
	for gi, g := range raw.WeightsManifest {
		if len(g.Paths) == 0 {
			return nil, fmt.Errorf("%w: model.json: weight group %d has no paths", ErrCorrupt, gi)
		}
		for _, p := range g.Paths {
			if p == "" || p == "." || p == ".." || p != filepath.Base(p) || strings.ContainsAny(p, `/\`) {
				return nil, fmt.Errorf("%w: model.json: shard path %q is not a plain file name", ErrCorrupt, p)
			}
		}
		for _, w := range g.Weights {
			count++
			if count > maxWeights {
				return nil, fmt.Errorf("%w: model.json: more than %d weights", ErrCorrupt, maxWeights)
			}
			if w.Name == "" || seen[w.Name] {
				return nil, fmt.Errorf("%w: model.json: weight name %q empty or repeated", ErrCorrupt, w.Name)
			}
			seen[w.Name] = true
			if len(w.Quantization) > 0 && string(w.Quantization) != "null" {
				return nil, fmt.Errorf("%w: model.json: weight %q is quantized", ErrUnsupported, w.Name)
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("%w: model.json: weight %q has dtype %q (want float32 or int32)", ErrUnsupported, w.Name, w.Dtype)
			}
			if len(w.Shape) > maxRank {
				return nil, fmt.Errorf("%w: model.json: weight %q has rank %d", ErrCorrupt, w.Name, len(w.Shape))
			}
			n := 1
			for _, d := range w.Shape {
				if d < 0 || d > maxWeightElems || n*d > maxWeightElems {
					return nil, fmt.Errorf("%w: model.json: weight %q has shape %v", ErrCorrupt, w.Name, w.Shape)
				}
				n *= d
			}
			total += 4 * n
			if total > maxTotalBytes {
				return nil, fmt.Errorf("%w: model.json: weights exceed %d bytes", ErrCorrupt, maxTotalBytes)
			}
		}
	}
	return &Manifest{Nodes: raw.Topology.Node, Groups: raw.WeightsManifest}, nil
}

// tensor is one loaded weight: float32 or int32 data in row-major order.
type tensor struct {
	shape []int
	f     []float32
	i     []int32
}

// loadWeights reads every group's shards from dir and slices them into
// tensors by name. The shards of a group must hold exactly the bytes the
// manifest declares. Each shard's bytes go to put as they are read, in
// manifest order.
func loadWeights(dir string, m *Manifest, put func([]byte)) (map[string]*tensor, error) {
	out := make(map[string]*tensor)
	for _, g := range m.Groups {
		want := 0
		for i := range g.Weights {
			want += 4 * g.Weights[i].elems()
		}
		buf := make([]byte, want)
		off := 0
		for _, p := range g.Paths {
			path := filepath.Join(dir, p)
			f, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrMissing, path, err)
			}
			n, err := io.ReadFull(f, buf[off:])
			put(buf[off : off+n])
			off += n
			if err == nil {
				// The group is full: this shard must end here and no
				// shard may follow with more bytes.
				var one [1]byte
				if k, _ := f.Read(one[:]); k > 0 {
					err = fmt.Errorf("longer than the manifest declares (%d bytes for the group)", want)
				}
			} else if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = nil // short shard: the next one continues the group
			}
			if cerr := f.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
			}
		}
		if off != want {
			return nil, fmt.Errorf("%w: shards %s hold %d bytes, the manifest declares %d", ErrCorrupt, strings.Join(g.Paths, ", "), off, want)
		}
		pos := 0
		for i := range g.Weights {
			w := &g.Weights[i]
			n := w.elems()
			t := &tensor{shape: w.Shape}
			b := buf[pos : pos+4*n]
			switch w.Dtype {
			case "float32":
				t.f = make([]float32, n)
				for k := range t.f {
					t.f[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
				}
			case "int32":
				t.i = make([]int32, n)
				for k := range t.i {
					t.i[k] = int32(binary.LittleEndian.Uint32(b[4*k:]))
				}
			}
			pos += 4 * n
			out[w.Name] = t
		}
	}
	return out, nil
}
