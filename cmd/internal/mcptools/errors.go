package mcptools

import "errors"

// Sentinel errors of the tools. Each is wrapped with the argument it
// concerns, and reaches the model as the text of an IsError result.
var (
	// ErrAgent: the call names an agent it may not act as, or names none
	// where one is needed.
	ErrAgent = errors.New("lazymem: agent")
	// ErrArgs: an argument's value is out of range (a negative k, budget
	// or limit).
	ErrArgs = errors.New("lazymem: bad argument")
	// ErrBusy: the store's caller refused the append for now (the daemon's
	// in-flight budget is spent); the call may be retried.
	ErrBusy = errors.New("lazymem: busy")
)
