package runner
