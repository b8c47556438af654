package scenario

import "github.com/aebench/aebench/harness/conditions"

// The conditions of a run are package conditions' (they travel with every
// number into the results, which must not link the backends this package
// checks a file against); the scenario fills them under its own names.
type (
	Config         = conditions.Config
	NetworkConfig  = conditions.NetworkConfig
	SLOConfig      = conditions.SLOConfig
	ExpectConfig   = conditions.ExpectConfig
	RedisConfig    = conditions.RedisConfig
	StoreConfig    = conditions.StoreConfig
	ProducerConfig = conditions.ProducerConfig
	WorkerConfig   = conditions.WorkerConfig
	BackendSpec    = conditions.BackendSpec
	TimeConfig     = conditions.TimeConfig
	Dist           = conditions.Dist
	RunSpec        = conditions.RunSpec
)
