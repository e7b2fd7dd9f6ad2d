package workflow

import (
	"context"
	"log/slog"

	"github.com/berth-dev/berth/project/workflow/definition"
	"github.com/berth-dev/berth/project/workflow/lambdaproc"
	"github.com/berth-dev/berth/project/workflow/pylambda"
)

// Lambdas runs gate lambdas: a *lambdaproc.Runner, which runs them in a
// child process under limits (the broker's runs the berth binary itself).
type Lambdas = definition.Lambdas

// loggedLambdas logs each child that a limit stopped.
type loggedLambdas struct {
	run   Lambdas
	log   *slog.Logger
	phase int
}

func (l loggedLambdas) Run(ctx context.Context, b pylambda.Batch) (lambdaproc.Result, error) {
	if l.run == nil {
		return lambdaproc.Result{}, errNoLambdas
	}
	res, err := l.run.Run(ctx, b)
	if err == nil && res.Stopped != "" {
		l.log.Warn("gate lambdas stopped by a limit: the check fails", "phase", l.phase, "why", res.Stopped,
			"cpu", res.CPU, "max_rss", res.MaxRSS)
	}
	return res, err
}
