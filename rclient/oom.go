package rclient

import "strings"

// oomReply is how Redis starts the error it returns for a write refused
// at maxmemory under noeviction (a script's write included).
const oomReply = "OOM command not allowed"

// IsOOM reports whether err carries Redis's out-of-memory refusal. It
// reads the text, not the type: the drivers of other job systems pass
// Redis's reply on as text, and a refusal must be told apart from a
// network error wherever it comes from. A refused call wrote nothing:
// Redis refuses a script before its first write, never in the middle.
func IsOOM(err error) bool { return err != nil && strings.Contains(err.Error(), oomReply) }
