// Package mcptools is lazymem's memory as Model Context Protocol tools:
// their names, descriptions, input schemas, annotations, and what calling
// each does on a store. One definition serves both transports: the
// daemon's streamable HTTP endpoint (lazymemd, POST /mcp, where a key's
// scopes and agents decide which tools a caller sees and which agents it
// may name) and the stdio server of `lazymem mcp` (one agent, fixed by a
// flag; the tools take no agent argument there).
//
// The tools are named as agents' memory tools usually are, with aliases:
//
//	add     (remember)  store one memory                  write
//	search  (recall)    the memories answering a question read-only, idempotent
//	list                the latest memories               read-only, idempotent
//	delete  (forget)    memories by ids or a session      destructive, idempotent
//	feedback            judge a search's memories         write
//	consolidate         distill memories into core memory write
//	core    (list_core) the agent's core memory units     read-only, idempotent
//
// The last three need Env.Core (the daemon sets it; All, the stdio
// server's list, leaves them out).
//
// A call whose arguments do not fit the tool's schema is the caller's
// protocol mistake (CheckArgs says what is wrong, naming the argument; a
// transport answers it as a JSON-RPC invalid-params error). A value the
// schema allows but the store rejects is the tool's error: a Result with
// IsError set, whose text the model reads and can act on.
package mcptools
