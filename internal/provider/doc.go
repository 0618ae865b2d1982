// Package provider holds the gateway's upstream adapters, one package per
// provider API, each implementing router.Upstream.
package provider
