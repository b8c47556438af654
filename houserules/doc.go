// Package houserules checks the repository's house rules as tests: file and
// function sizes, imports that only go down the layers written in
// docs/layers.md, and no branch on a fault kind outside faults/. It holds
// no code of its own; its test reads the tree as text.
package houserules
