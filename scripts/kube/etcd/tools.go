//go:build tools

// Package tools names the command this module builds (the server module is itself package main).
package tools

import _ "go.etcd.io/etcd/server/v3"
