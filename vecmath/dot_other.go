//go:build (!amd64 && !arm64) || purego

package vecmath

// platformKernels has no assembly to offer on this platform or under the
// purego build tag: the generic Go loops are used.
func platformKernels() []*kernels { return nil }
