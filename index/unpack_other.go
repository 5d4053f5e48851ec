//go:build !amd64 || purego

package index

// No bit-unpacking kernel on this platform or under the purego tag: the
// Go loops of postings_decode.go decode every block.

const tierGo = 0

var unpackTiers = []int{tierGo}

const unpackTier = tierGo

func unpackAt(int, []byte, []uint32, uint, uint32) bool { return false }

func unpackGapsAt(int, []byte, []uint32, uint, uint64) (uint64, bool) { return 0, false }
