// Package breakercmp benchmarks package breaker against
// github.com/sony/gobreaker/v2 and github.com/failsafe-go/failsafe-go, each
// configured with the same trip rule, in one run. It holds only benchmarks;
// see ../README.md for how to run and summarise them.
package breakercmp
