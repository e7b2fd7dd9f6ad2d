package pylambda

import (
	"fmt"

	"github.com/berth-dev/berth/project/textcut"
)

// Batch is the lambdas of one gate check and the calls to make: what the
// process that runs lambdas (package lambdaproc) receives.
type Batch struct {
	// Lambdas are the sources of the lambdas the calls name.
	Lambdas []string `json:"lambdas"`
	// Evidence is the evidence checked: a rule is called with it, a
	// validator with one of its fields.
	Evidence map[string]any `json:"evidence"`
	Calls    []Call         `json:"calls"`
}

// Call is one call of a lambda of a batch.
type Call struct {
	// Lambda indexes Batch.Lambdas.
	Lambda int `json:"lambda"`
	// Field names the evidence field a validator is called with; "" calls
	// a rule with the whole evidence.
	Field string `json:"field,omitempty"`
	// Kwargs are a validator's validator_params.
	Kwargs map[string]any `json:"kwargs,omitempty"`
}

// Outcome is the result of one call: the truth of the lambda's result, or
// why it failed (a failure fails the check, as in praxis-os).
type Outcome struct {
	OK  bool   `json:"ok"`
	Err string `json:"error,omitempty"`
}

// maxErrBytes bounds the text of a failed call's error.
const maxErrBytes = 1 << 10

// Run compiles the batch's lambdas and makes its calls in order, handing
// each outcome to emit as soon as it is known (so that a caller that stops
// the batch midway knows which call was running). It fails only when emit
// does.
func (b Batch) Run(emit func(Outcome) error) error {
	fns := make([]*Func, len(b.Lambdas))
	errs := make([]error, len(b.Lambdas))
	for i, src := range b.Lambdas {
		fns[i], errs[i] = Compile(src)
	}
	for _, c := range b.Calls {
		if err := emit(b.call(c, fns, errs)); err != nil {
			return err
		}
	}
	return nil
}

func (b Batch) call(c Call, fns []*Func, errs []error) Outcome {
	if c.Lambda < 0 || c.Lambda >= len(fns) {
		return Outcome{Err: fmt.Sprintf("no lambda %d in the batch", c.Lambda)}
	}
	if errs[c.Lambda] != nil {
		return failed(errs[c.Lambda])
	}
	var arg any = b.Evidence
	if c.Field != "" {
		arg = b.Evidence[c.Field]
	}
	ok, err := fns[c.Lambda].Call([]any{arg}, c.Kwargs)
	if err != nil {
		return failed(err)
	}
	return Outcome{OK: ok}
}

// failed is an outcome for err, its text cut to maxErrBytes.
func failed(err error) Outcome {
	return Outcome{Err: textcut.Cut(err.Error(), maxErrBytes, "...")}
}
