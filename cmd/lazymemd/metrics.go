package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lazymem/lazymem/engine"
)

// Prometheus export. The engine gives plain snapshots (DB.Metrics,
// RecallStats); this file is the one place they become Prometheus
// series. Each server has its own registry, so tests do not share
// counters.
type promMetrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec   // op, code
	latency   *prometheus.HistogramVec // op
	stages    *prometheus.HistogramVec // stage
	recallOps *prometheus.CounterVec   // what recalls did: embedded, cache_hits, ...
	bgErrors  prometheus.Counter
}

// latencyBuckets span a cached sparse recall (~100 us) to a cold dense one
// over a large store (seconds).
var latencyBuckets = prometheus.ExponentialBuckets(50e-6, 2.5, 14)

func newPromMetrics(s *server) *promMetrics {
	m := &promMetrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lazymemd_http_requests_total", Help: "HTTP requests answered, by operation (the route's operationId) and status code.",
		}, []string{"op", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lazymemd_http_request_duration_seconds", Help: "Time to answer an HTTP request, by operation.", Buckets: latencyBuckets,
		}, []string{"op"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lazymem_recall_stage_duration_seconds", Help: "Wall time of each recall stage (filter, broad, fetch, embed, score, total).", Buckets: latencyBuckets,
		}, []string{"stage"}),
		recallOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lazymem_recall_items_total", Help: "What recalls handled: filtered records, candidates, texts embedded (embedder calls' inputs), cache hits.",
		}, []string{"kind"}),
		bgErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lazymemd_background_errors_logged_total", Help: "Background errors of the store reported to the daemon (each also logged).",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.stages, m.recallOps, m.bgErrors, storeCollector{s})
	return m
}

// observeRecall records one recall's stage times and counts.
func (m *promMetrics) observeRecall(st *engine.RecallStats) {
	d := st.Durations
	for _, x := range []struct {
		stage string
		d     time.Duration
	}{{"filter", d.Filter}, {"broad", d.Broad}, {"fetch", d.Fetch}, {"embed", d.Embed}, {"score", d.Score}, {"total", d.Total}} {
		m.stages.WithLabelValues(x.stage).Observe(x.d.Seconds())
	}
	for _, x := range []struct {
		kind string
		n    int
	}{{"filtered", st.Filtered}, {"candidates", st.Candidates}, {"embedded", st.Embedded}, {"cache_hits", st.CacheHits}, {"shared", st.Shared}} {
		m.recallOps.WithLabelValues(x.kind).Add(float64(x.n))
	}
}

// instrumented counts a route's requests and times them.
func (s *server) instrumented(rt route, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw, ok := w.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: w}
		}
		h(sw, r)
		code := sw.status
		if code == 0 {
			code = http.StatusOK
		}
		s.prom.requests.WithLabelValues(rt.op, strconv.Itoa(code)).Inc()
		s.prom.latency.WithLabelValues(rt.op).Observe(time.Since(t0).Seconds())
	}
}

// metrics serves the Prometheus text exposition.
func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(s.prom.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// storeCollector reads DB.Metrics at each scrape: sizes, counters of the
// log, the index and the embedding cache.
type storeCollector struct{ s *server }

var (
	descGauge = func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }

	dRecords       = descGauge("lazymem_log_records", "Record ids assigned (the log's next id minus one).")
	dAppended      = descGauge("lazymem_appended_total", "Records appended since the store opened.")
	dRecalls       = descGauge("lazymem_recalls_total", "Recalls answered since the store opened.")
	dLogRaw        = descGauge("lazymem_log_raw_bytes", "Payload bytes stored in the log (before compression).")
	dLogDisk       = descGauge("lazymem_log_disk_bytes", "Bytes of the log's files on disk.")
	dLogSegments   = descGauge("lazymem_log_segments", "Sealed log segments.")
	dTombstones    = descGauge("lazymem_log_tombstones", "Deleted records awaiting compaction.")
	dDeleted       = descGauge("lazymem_log_deleted_total", "Records deleted since the store opened.")
	dDropped       = descGauge("lazymem_log_dropped_records_total", "Record slots dropped by compaction since the store opened.")
	dSealAssists   = descGauge("lazymem_log_seal_assists_total", "Log segments sealed by appends because the background sealer fell behind, since the store opened.")
	dAssistTimeout = descGauge("lazymem_log_assist_timeouts_total", "Appends that gave up waiting for the log's sealers' lock after 20 ms (the tail stayed over its bound), since the store opened.")
	dIndexDocs     = descGauge("lazymem_index_docs", "Live documents in the index.")
	dIndexBytes    = descGauge("lazymem_index_segment_bytes", "Bytes of the index's sealed segments.")
	dIndexSegs     = descGauge("lazymem_index_segments", "Sealed index segments.")
	dMerges        = descGauge("lazymem_index_merges_total", "Index segment merges since the store opened.")
	dFlushes       = descGauge("lazymem_index_flushes_total", "Index flushes since the store opened.")
	dIndexErrors   = descGauge("lazymem_index_errors_total", "Batches stored but not indexed (re-indexed on the next open).")
	dRepairs       = descGauge("lazymem_index_repairs", "Index segments dropped and rebuilt from the log when the store opened (plus 1 if the whole index was moved aside).")
	dBgErrors      = descGauge("lazymem_background_errors_total", "Errors of background work (merges, flushes, shared embeddings, the cache's Pebble).")
	dEmbedCalls    = descGauge("lazymem_embedder_calls_total", "Batched calls to the embedder.")
	dEmbedComputed = descGauge("lazymem_embedder_texts_total", "Texts embedded (misses of both cache tiers).")
	dCacheHits     = prometheus.NewDesc("lazymem_embed_cache_hits_total", "Embedding lookups answered from the cache, by tier (memory, disk).", []string{"tier"}, nil)
	dForgotten     = descGauge("lazymem_forgotten_total", "Records forgotten since the store opened (forget, retention).")
	dCompactions   = descGauge("lazymem_compactions_total", "Purges of forgotten records' bytes since the store opened.")
	dRetPasses     = descGauge("lazymem_retention_passes_total", "Retention passes since the store opened.")
	dRetExpired    = descGauge("lazymem_retention_expired_total", "Records removed by retention since the store opened.")
	dPinned        = descGauge("lazymem_pinned_records", "Records pinned now (exempt from retention).")
	dCacheRatio    = descGauge("lazymem_embed_cache_hit_ratio", "Embedding cache hits over lookups since the store opened (0 before any lookup).")
	dCacheSkipped  = descGauge("lazymem_embed_cache_disk_skipped_total", "Vectors kept in memory only because the cache's disk tier took no writes (a full disk).")
	dWorkEmbedded  = descGauge("lazymem_working_memory_embedded_total", "Texts of live turns the working memory embedded in the background.")
	dWorkDropped   = descGauge("lazymem_working_memory_dropped_total", "Live turns dropped unembedded from the working memory's full queue.")
)

func (storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dRecords, dAppended, dRecalls, dLogRaw, dLogDisk, dLogSegments, dTombstones, dDeleted, dDropped, dSealAssists, dAssistTimeout,
		dIndexDocs, dIndexBytes, dIndexSegs, dMerges, dFlushes, dIndexErrors, dRepairs, dBgErrors, dEmbedCalls, dEmbedComputed, dCacheHits, dCacheRatio, dCacheSkipped, dWorkEmbedded, dWorkDropped, dForgotten, dCompactions, dRetPasses, dRetExpired, dPinned} {
		ch <- d
	}
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.state.Load() != stateReady {
		return
	}
	m := c.s.db.Metrics()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(dRecords, float64(m.Log.Next-1))
	counter(dAppended, float64(m.Appended))
	counter(dRecalls, float64(m.Recalls))
	gauge(dLogRaw, float64(m.Log.RawBytes))
	gauge(dLogDisk, float64(m.Log.DiskBytes))
	gauge(dLogSegments, float64(m.Log.Segments))
	gauge(dTombstones, float64(m.Log.Tombstones))
	counter(dDeleted, float64(m.Log.Deleted))
	counter(dDropped, float64(m.Log.DroppedRecords))
	counter(dSealAssists, float64(m.Log.SealAssists))
	counter(dAssistTimeout, float64(m.Log.AssistTimeouts))
	gauge(dIndexDocs, float64(m.Index.Docs))
	gauge(dIndexBytes, float64(m.Index.SegmentBytes))
	gauge(dIndexSegs, float64(m.Index.Segments))
	counter(dMerges, float64(m.Index.Merges))
	counter(dFlushes, float64(m.Index.Flushes))
	counter(dIndexErrors, float64(m.IndexErrors))
	repairs := len(m.Index.Repairs)
	if m.IndexRepaired != "" {
		repairs++
	}
	gauge(dRepairs, float64(repairs))
	counter(dBgErrors, float64(m.BackgroundErrors))
	counter(dEmbedCalls, float64(m.Cache.EmbedCalls))
	counter(dEmbedComputed, float64(m.Cache.Computed))
	ch <- prometheus.MustNewConstMetric(dCacheHits, prometheus.CounterValue, float64(m.Cache.MemHits), "memory")
	ch <- prometheus.MustNewConstMetric(dCacheHits, prometheus.CounterValue, float64(m.Cache.DiskHits), "disk")
	counter(dCacheSkipped, float64(m.Cache.DiskSkipped))
	counter(dWorkEmbedded, float64(m.WorkingMemory.Embedded))
	counter(dWorkDropped, float64(m.WorkingMemory.Dropped))
	ratio := 0.0
	if lookups := m.Cache.MemHits + m.Cache.DiskHits + m.Cache.Computed + m.Cache.Shared; lookups > 0 {
		ratio = float64(m.Cache.MemHits+m.Cache.DiskHits) / float64(lookups)
	}
	gauge(dCacheRatio, ratio)
	counter(dForgotten, float64(m.Forgotten))
	counter(dCompactions, float64(m.Compactions))
	counter(dRetPasses, float64(m.Retention.Passes))
	counter(dRetExpired, float64(m.Retention.Expired))
	gauge(dPinned, float64(m.Retention.Pinned))
}
