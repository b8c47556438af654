package redisserver

import (
	"context"
	"fmt"
	"strings"
)

// Check is one thing Doctor tried on a server: what aebench needs it for,
// whether the server allowed it, and what it said.
type Check struct {
	Name string // e.g. "INFO commandstats"
	// Needed says what aebench loses without it; Required: a run cannot
	// proceed without it.
	Needed   string
	Required bool
	// Warn: not a refusal but a setting that puts jobs at risk.
	Warn   bool
	OK     bool
	Detail string
}

// Report is what Doctor found: the server, then each check.
type Report struct {
	Addr, Version string
	Cluster, TLS  bool
	User          string
	Checks        []Check
}

// Runnable says whether a run can proceed: every required check passed.
func (r Report) Runnable() bool {
	for _, c := range r.Checks {
		if c.Required && !c.OK {
			return false
		}
	}
	return true
}

// Problems lists the required checks that failed, a line each.
func (r Report) Problems() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Required && !c.OK {
			out = append(out, fmt.Sprintf("%s refused (%s): %s", c.Name, c.Detail, c.Needed))
		}
	}
	return out
}

// doctorLib is the library Doctor loads and deletes to learn whether the
// server takes Functions.
const doctorLib = "#!lua name=aebench_doctor\nredis.register_function('aebench_doctor_ping', function() return 1 end)"

// Doctor says what aebench can and cannot measure on r's first server:
// INFO (Redis CPU, memory, commands per job), INFO commandstats, Functions
// (FUNCTION LOAD, then FUNCTION DELETE of its own library), scripts
// (EVAL, the fallback: the stores load their scripts with EVALSHA where
// FUNCTION is unknown or refused), CONFIG (managed services refuse it;
// aebench needs it only on servers it spawns) and cluster mode. It writes
// nothing but its own function library, which it deletes.
func Doctor(ctx context.Context, r *Redis) Report {
	rep := Report{Addr: r.Addrs[0], Cluster: r.Cluster, TLS: r.TLS != nil, User: r.Username}
	if rep.User == "" {
		rep.User = "default"
	}
	c := newClient(r.Addrs[0], r.Auth(), 0)
	defer c.Close()
	try := func(name, needed string, required bool, args ...any) (any, bool) {
		v, err := c.Do(ctx, args...).Result()
		ch := Check{Name: name, Needed: needed, Required: required, OK: err == nil}
		if err != nil {
			ch.Detail = firstLine(err.Error())
		}
		rep.Checks = append(rep.Checks, ch)
		return v, err == nil
	}
	try("PING", "every call", true, "PING")
	if v, ok := try("INFO server", "the Redis version in every table", true, "INFO", "server"); ok {
		rep.Version = infoField(fmt.Sprint(v), "redis_version")
	}
	try("INFO cpu, memory, stats", "Redis CPU, memory and bytes per job", true, "INFO", "cpu")
	if v, ok := try("INFO commandstats", "commands per job and the top commands", true, "INFO", "commandstats"); ok && !strings.Contains(fmt.Sprint(v), "cmdstat_") {
		last := &rep.Checks[len(rep.Checks)-1]
		last.OK, last.Detail = false, "the section is empty (the service hides it)"
	}
	_, fn := try("FUNCTION LOAD", "the job stores' scripts (one library a backend)", false, "FUNCTION", "LOAD", "REPLACE", doctorLib)
	if fn {
		try("FUNCTION DELETE", "removing the doctor's own test library", false, "FUNCTION", "DELETE", "aebench_doctor")
	}
	_, ev := try("EVAL", "the scripts' fallback where Functions are refused", false, "EVAL", "return 1", "0")
	rep.Checks = append(rep.Checks, Check{Name: "Functions or EVAL", Needed: "the job stores' scripts", Required: true, OK: fn || ev,
		Detail: map[bool]string{true: "", false: "both refused"}[fn || ev]})
	try("CONFIG GET", "nothing on a server given by URL (aebench sets hz and persistence only on servers it spawns); managed services refuse it", false, "CONFIG", "GET", "maxmemory-policy")
	if v, err := c.Do(ctx, "INFO", "memory").Result(); err == nil {
		rep.Checks = append(rep.Checks, evictionCheck(infoField(fmt.Sprint(v), "maxmemory_policy"), infoField(fmt.Sprint(v), "maxmemory")))
	}
	return rep
}

// evictionCheck judges a server's maxmemory-policy (from INFO memory, which
// managed services that refuse CONFIG still answer): anything but
// noeviction lets Redis evict job records and queue keys when memory runs
// out, and jobs then vanish without an error. BullMQ's and Sidekiq's
// documents tell their users to run noeviction.
func evictionCheck(policy, maxmemory string) Check {
	ch := Check{Name: "maxmemory-policy", Needed: "a job store that never loses an acknowledged job to eviction (noeviction; BullMQ and Sidekiq require it)", Warn: true, OK: true, Detail: policy}
	if policy != "" && policy != "noeviction" {
		ch.OK = false
		ch.Detail = fmt.Sprintf("%s (maxmemory %s): when memory runs out Redis evicts keys, job records and queue keys among them, and those jobs vanish without an error; under noeviction the same pressure refuses writes instead (OOM errors the stores report)", policy, maxmemory)
		ch.Detail += "; scenarios/eviction.yaml reproduces it (aebench run scenarios/eviction.yaml): on 2026-11-28, with ballast at 120% of maxmemory, allkeys-random cost every strategy and peer it ran hundreds of acknowledged jobs and allkeys-lru cost zset, bucket, dual, asynq and RQ as many (their cold records evicted), while noeviction lost none to eviction and refused writes instead (docs/results.md)"
		if maxmemory == "0" {
			ch.Detail += "; with maxmemory 0 the policy never acts, until someone sets a limit"
		}
	}
	return ch
}
