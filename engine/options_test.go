package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/engine/consolidate"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

// TestOptionsExplicitSurviveOpen: every field a caller sets explicitly (to
// a value other than its default) is what the open DB uses. The table must
// name every field of Options, segment.Options and index.Options: a new
// field fails the test until it is added.
func TestOptionsExplicitSurviveOpen(t *testing.T) {
	mem := vfs.NewMem()
	h, err := embed.NewHash(embed.HashOptions{Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	construct := func(r *Record) string { return "x " + r.Text }
	clock := func() time.Time { return storeClock }
	onErr := func(error) {}
	coreValue := consolidate.Options{Threshold: 0.7}
	coreValue.EnsureDefaults()
	rules, err := consolidate.NewRules(coreValue)
	if err != nil {
		t.Fatal(err)
	}
	// set: the field's explicit value; each case opens its own store.
	cases := map[string]func(o *Options){
		"Embedder":              func(o *Options) { o.Embedder = h },
		"DisableEmbedder":       func(o *Options) { o.DisableEmbedder = true },
		"Construct":             func(o *Options) { o.Construct = construct },
		"DenseWeight":           func(o *Options) { o.DenseWeight = 0.45 },
		"Candidates":            func(o *Options) { o.Candidates = 120 },
		"MaxTextBytes":          func(o *Options) { o.MaxTextBytes = 1000 },
		"MaxFieldBytes":         func(o *Options) { o.MaxFieldBytes = 100 },
		"MaxMetaKeys":           func(o *Options) { o.MaxMetaKeys = 3 },
		"MaxMetaValues":         func(o *Options) { o.MaxMetaValues = 4 },
		"CacheBytes":            func(o *Options) { o.CacheBytes = -1 },
		"DiskCacheBlockBytes":   func(o *Options) { o.DiskCacheBlockBytes = 1 << 20 },
		"DisableDiskCache":      func(o *Options) { o.DisableDiskCache = true },
		"Clock":                 func(o *Options) { o.Clock = clock },
		"DisableIndexRepair":    func(o *Options) { o.DisableIndexRepair = true },
		"DisableSessionContext": func(o *Options) { o.DisableSessionContext = true },
		"FS":                    func(o *Options) { o.FS = vfs.NewMem() },
		"EmbedTimeout":          func(o *Options) { o.EmbedTimeout = time.Minute },
		"OnBackgroundError":     func(o *Options) { o.OnBackgroundError = onErr },
		"Retention":             func(o *Options) { o.Retention = RetentionOptions{Window: time.Hour, Interval: time.Minute} },
		"CompactInterval":       func(o *Options) { o.CompactInterval = time.Minute },
		"MustExist":             func(o *Options) { o.MustExist = true },

		"Log.FS":                    func(o *Options) { o.Log.FS = vfs.NewMem() },
		"Log.SegmentRecords":        func(o *Options) { o.Log.SegmentRecords = 7 },
		"Log.SegmentBytes":          func(o *Options) { o.Log.SegmentBytes = 9000 },
		"Log.Compression":           func(o *Options) { o.Log.Compression = segment.CompressionS2 },
		"Log.NoCompression":         func(o *Options) { o.Log.NoCompression = true; o.Log.Compression = segment.CompressionNone },
		"Log.ZstdLevel":             func(o *Options) { o.Log.ZstdLevel = 1 },
		"Log.DisableColumns":        func(o *Options) { o.Log.DisableColumns = true },
		"Log.DisableDictionary":     func(o *Options) { o.Log.DisableDictionary = true },
		"Log.DisableWords":          func(o *Options) { o.Log.DisableWords = true },
		"Log.CacheBytes":            func(o *Options) { o.Log.CacheBytes = 1 << 20 },
		"Log.MaxRecordBytes":        func(o *Options) { o.Log.MaxRecordBytes = 2 << 20 },
		"Log.MemTableBytes":         func(o *Options) { o.Log.MemTableBytes = 8 << 20 },
		"Log.DisableBackgroundSeal": func(o *Options) { o.Log.DisableBackgroundSeal = true },
		"Log.Logf":                  func(o *Options) { o.Log.Logf = t.Logf },
		"Log.ReserveBytes":          func(o *Options) { o.Log.ReserveBytes = 1 << 20 },

		"Index.K1":                     func(o *Options) { o.Index.K1 = 0.9 },
		"Index.B":                      func(o *Options) { o.Index.B = 0.4 },
		"Index.Analyzer":               func(o *Options) { o.Index.Analyzer = index.SimpleAnalyzer{} },
		"Index.FS":                     func(o *Options) { o.Index.FS = vfs.NewMem() },
		"Index.FlushDocs":              func(o *Options) { o.Index.FlushDocs = -1 },
		"Index.MergeFactor":            func(o *Options) { o.Index.MergeFactor = 3 },
		"Index.MergeMinDocs":           func(o *Options) { o.Index.MergeMinDocs = 10 },
		"Index.DisableBackgroundMerge": func(o *Options) { o.Index.DisableBackgroundMerge = true },
		"Index.SettleAfter":            func(o *Options) { o.Index.SettleAfter = -1 },
		"Index.SettleMaxDocs":          func(o *Options) { o.Index.SettleMaxDocs = 1000 },
		"Index.FilterDrivenRatio":      func(o *Options) { o.Index.FilterDrivenRatio = 5 },
		"Index.FilterCacheBytes":       func(o *Options) { o.Index.FilterCacheBytes = 1 << 20 },
		"Index.SessionContext":         func(o *Options) { o.Index.SessionContext = true },
		"Index.ContextWeight":          func(o *Options) { o.Index.ContextWeight = 0.5 },
		"Index.ContextSample":          func(o *Options) { o.Index.ContextSample = true },
		"Index.OnBackgroundError":      func(o *Options) { o.Index.OnBackgroundError = onErr },

		"Core.Value":          func(o *Options) { o.Core.Value = coreValue },
		"Core.Consolidator":   func(o *Options) { o.Core.Consolidator = rules },
		"Core.PromoteTopK":    func(o *Options) { o.Core.PromoteTopK = 5 },
		"Core.RecallWeight":   func(o *Options) { o.Core.RecallWeight = 0.25 },
		"Core.FeedbackWeight": func(o *Options) { o.Core.FeedbackWeight = 0.3 },
		"Core.Boost":          func(o *Options) { o.Core.Boost = 1.2 },
		"Core.RoleMetaKey":    func(o *Options) { o.Core.RoleMetaKey = "role" },
		"Core.FlushInterval":  func(o *Options) { o.Core.FlushInterval = time.Minute },
		"Core.RecallRing":     func(o *Options) { o.Core.RecallRing = 16 },
		"Core.Background":     func(o *Options) { o.Core.Background = true },
		"Core.IdleTimeout":    func(o *Options) { o.Core.IdleTimeout = time.Hour },

		"KeepOpenGarbage": func(o *Options) { o.KeepOpenGarbage = true },

		"WorkingMemory.Disable":    func(o *Options) { o.WorkingMemory.Disable = true },
		"WorkingMemory.Live":       func(o *Options) { o.WorkingMemory.Live = time.Hour },
		"WorkingMemory.PerAppend":  func(o *Options) { o.WorkingMemory.PerAppend = 9 },
		"WorkingMemory.MaxPending": func(o *Options) { o.WorkingMemory.MaxPending = 7 },
		"WorkingMemory.PerMinute":  func(o *Options) { o.WorkingMemory.PerMinute = 30 },
	}
	for _, name := range optionFields(reflect.TypeFor[Options](), "") {
		if _, ok := cases[name]; !ok {
			t.Errorf("option %s has no case: add one", name)
		}
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			var o Options
			o.FS = mem
			set(&o)
			want := fieldOf(&o, name)
			if want.IsZero() {
				t.Fatalf("the case leaves %s at its zero value", name)
			}
			if o.MustExist { // the store must be there first
				pre := o
				pre.MustExist = false
				db, err := Open(mem.PathJoin("s", name), pre)
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			db, err := Open(mem.PathJoin("s", name), o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got := fieldOf(&db.opts, name)
			if !sameValue(got, want) {
				t.Errorf("%s: set %v, the DB uses %v", name, want, got)
			}
			// Open kept a copy: changing the caller's options later does
			// not reach the DB.
			o.MaxTextBytes = 5
			if db.opts.MaxTextBytes == 5 {
				t.Error("the DB shares the caller's Options")
			}
		})
	}
}

// optionFields lists the settable fields of an options struct, recursing
// into Log, Index and Core.
func optionFields(typ reflect.Type, prefix string) []string {
	var out []string
	for f := range typ.Fields() {
		if f.Name == "Log" || f.Name == "Index" || f.Name == "Core" || f.Name == "WorkingMemory" {
			out = append(out, optionFields(f.Type, f.Name+".")...)
			continue
		}
		out = append(out, prefix+f.Name)
	}
	return out
}

func fieldOf(o *Options, name string) reflect.Value {
	v := reflect.ValueOf(o).Elem()
	for len(name) > 0 {
		i := 0
		for i < len(name) && name[i] != '.' {
			i++
		}
		v = v.FieldByName(name[:i])
		if i == len(name) {
			break
		}
		name = name[i+1:]
	}
	return v
}

// sameValue compares option values; functions by their code pointer.
func sameValue(a, b reflect.Value) bool {
	if a.Kind() == reflect.Func {
		return a.Pointer() == b.Pointer()
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// TestOptionsSessionContextConflict: an explicit Index.SessionContext with
// DisableSessionContext is an error naming both, not a silent choice.
func TestOptionsSessionContextConflict(t *testing.T) {
	o := Options{DisableSessionContext: true, Index: index.Options{SessionContext: true}}
	err := o.EnsureDefaults().Validate()
	if !errors.Is(err, ErrOptions) || err == nil || !containsAll(err.Error(), "Index.SessionContext", "DisableSessionContext") {
		t.Fatalf("Validate = %v", err)
	}
	o = Options{DisableSessionContext: true}
	if o.EnsureDefaults(); o.Index.SessionContext {
		t.Error("DisableSessionContext left Index.SessionContext on")
	}
	o = Options{}
	if o.EnsureDefaults(); !o.Index.SessionContext {
		t.Error("the default did not turn Index.SessionContext on")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
