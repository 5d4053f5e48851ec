package meeting

import "errors"

// ErrInvalidConfig is wrapped by every error Config.Validate returns.
var ErrInvalidConfig = errors.New("lazymem: meeting: invalid config")
