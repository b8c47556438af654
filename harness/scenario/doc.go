// Package scenario is the top of aebench's data flow: it parses scenario
// files and --set overrides into a matrix of runs (types, the field table,
// defaults, distributions) and resolves every default a run needs, down to
// the jobstore.Options its stores are built with (Config.StoreOptions). It
// runs nothing; the engine and the runner read what it produces.
package scenario
