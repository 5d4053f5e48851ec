package cluster

import (
	"hash/fnv"
	"sort"
	"sync"
)

// partitionBits is how many low bits of a public id hold its partition.
// Never change it: ids handed to clients would change meaning.
const partitionBits = 8

// MaxPartitions is the most partitions a cluster can have.
const MaxPartitions = 1 << partitionBits

// MetaID is the metadata key under which a node's engine keeps a record's
// public id. Client records may not carry it.
const MetaID = "lazymem-id"

// PublicID is the id clients see for the record stored at stream
// sequence seq in partition p: the same on every node, after any rebuild.
func PublicID(seq uint64, p int) uint64 { return seq<<partitionBits | uint64(p) }

// SplitID is PublicID's inverse: the record's stream sequence and
// partition.
func SplitID(id uint64) (seq uint64, p int) {
	return id >> partitionBits, int(id & (MaxPartitions - 1))
}

// PartitionOf is the partition of agent among n: FNV-1a of its name.
// Never change it: a cluster's records are placed by it.
func PartitionOf(agent string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(agent))
	return int(h.Sum32() % uint32(n))
}

// rendezvous picks the owner of partition p among nodes: the node whose
// hash with p is highest, so a node joining or leaving moves only the
// partitions it wins or held.
func rendezvous(p int, nodes []string) string {
	best, bestH := "", uint64(0)
	for _, n := range nodes {
		h := fnv.New64a()
		h.Write([]byte{byte(p), byte(p >> 8)})
		h.Write([]byte(n))
		if v := h.Sum64(); best == "" || v > bestH {
			best, bestH = n, v
		}
	}
	return best
}

// SettledOwner is the node among nodes (the live nodes' ids) that owns
// partition p once the leases have settled: the rendezvous owner. A node
// joining or leaving moves partitions toward it over a few lease rounds.
func SettledOwner(p int, nodes []string) string { return rendezvous(p, nodes) }

// idMap maps a partition's public ids to its engine's local ids and
// back. Both ascend together: the partition is applied in stream order.
type idMap struct {
	mu  sync.RWMutex
	pub []uint64
	loc []uint64
}

// reset empties the map.
func (m *idMap) reset() {
	m.mu.Lock()
	m.pub, m.loc = nil, nil
	m.mu.Unlock()
}

func (m *idMap) add(pub, loc uint64) {
	m.mu.Lock()
	m.pub = append(m.pub, pub)
	m.loc = append(m.loc, loc)
	m.mu.Unlock()
}

// local is the local id of public id pub.
func (m *idMap) local(pub uint64) (uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i := sort.Search(len(m.pub), func(i int) bool { return m.pub[i] >= pub })
	if i < len(m.pub) && m.pub[i] == pub {
		return m.loc[i], true
	}
	return 0, false
}

// public is the public id of local id loc.
func (m *idMap) public(loc uint64) (uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i := sort.Search(len(m.loc), func(i int) bool { return m.loc[i] >= loc })
	if i < len(m.loc) && m.loc[i] == loc {
		return m.pub[i], true
	}
	return 0, false
}

// last is the highest public and local ids mapped (0, 0 when empty).
func (m *idMap) last() (pub, loc uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if n := len(m.pub); n > 0 {
		return m.pub[n-1], m.loc[n-1]
	}
	return 0, 0
}
