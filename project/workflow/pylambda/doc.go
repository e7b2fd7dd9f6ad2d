// Package pylambda runs the Python lambda expressions that praxis-os gate
// files hold (validators such as "lambda x: x > 0" and cross_field_validation
// rules such as "lambda e: e['a'] >= e['b']") without Python: each is read as
// Starlark, the Python dialect of go.starlark.net, after two rewrites of
// Python syntax Starlark lacks ("is" / "is not" become "==" / "!=", and a
// generator passed alone to a call, as in any(p in x for p in ps), becomes a
// list comprehension).
//
// What runs is what praxis-os offers a lambda: the Starlark built-ins (len,
// str, int, float, bool, list, dict, set, any, all, min, max, sorted,
// enumerate, zip, abs, ...), plus isinstance, sum, round, and the modules re
// (match, search, fullmatch, findall, sub, on Go's RE2 syntax) and yaml
// (safe_load). There is no file, network or clock access, and each call is
// bounded by a step budget; a parameter's default must be a constant. The
// step budget does not count what one builtin allocates or computes, so
// the broker runs lambdas in a child process under limits (package
// lambdaproc), and the re module bounds its patterns and their inputs
// (package pattern).
//
// A lambda that does not compile is reported by [Compile] with the reason and
// the fix, so that a gate is refused when it is loaded, never passed silently
// later. Known differences from Python: chained comparisons (a <= x <= b)
// must be written with "and"; len of a string counts bytes, not characters;
// regular expressions use RE2 (no look-around or back-references).
package pylambda
