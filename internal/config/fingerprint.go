package config

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"reflect"
	"slices"
)

// Fingerprint returns a digest of every setting in v, secrets included (a
// new key is a change), so that a reload can tell which parts of a
// configuration changed. Two values with the same settings have the same
// fingerprint; functions and channels are ignored. The digest reveals
// nothing of the secrets.
func Fingerprint(v any) string {
	h := sha256.New()
	digest(h, reflect.ValueOf(v))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func digest(h hash.Hash, v reflect.Value) {
	var n [8]byte
	num := func(x uint64) {
		binary.LittleEndian.PutUint64(n[:], x)
		h.Write(n[:])
	}
	if !v.IsValid() {
		h.Write([]byte{0})
		return
	}
	switch v.Kind() {
	case reflect.String:
		num(uint64(v.Len()))
		h.Write([]byte(v.String()))
	case reflect.Bool:
		if v.Bool() {
			num(1)
		} else {
			num(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		num(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		num(v.Uint())
	case reflect.Float32, reflect.Float64:
		num(math.Float64bits(v.Float()))
	case reflect.Slice, reflect.Array:
		num(uint64(v.Len()))
		for i := range v.Len() {
			digest(h, v.Index(i))
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int {
			return compareKeys(a, b)
		})
		num(uint64(len(keys)))
		for _, k := range keys {
			digest(h, k)
			digest(h, v.MapIndex(k))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			digest(h, v.Field(i))
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			h.Write([]byte{0})
			return
		}
		h.Write([]byte{1})
		digest(h, v.Elem())
	}
}

// compareKeys orders map keys of the kinds configurations use.
func compareKeys(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.String:
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(min(max(a.Int()-b.Int(), -1), 1))
	}
	return 0
}
