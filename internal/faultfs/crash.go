package faultfs

import (
	"math/rand/v2"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// CrashCfg is how the crash tests clone their in-memory filesystem at the
// n-th hooked operation: one image in three keeps every unsynced write
// (n%3 == 1), one keeps each with probability one half (n%3 == 2), and one
// loses them all (n%3 == 0), so each kind of crash is met in every run. The
// partial images draw their choice from a source seeded by rng, which the
// caller holds under the lock that orders the hook's calls.
func CrashCfg(n int, rng *rand.Rand) vfs.CrashCloneCfg {
	switch n % 3 {
	case 1:
		return vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(rng.Uint64(), 1))}
	case 2:
		return vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(rng.Uint64(), 1))}
	}
	return vfs.CrashCloneCfg{}
}
