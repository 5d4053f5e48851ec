package workload

import "errors"

// ErrInvalidConfig is wrapped by every error Validate returns.
var ErrInvalidConfig = errors.New("lazymem: invalid workload config")
