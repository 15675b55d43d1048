//go:build tools

// Package tools names the commands this module builds, so `go mod tidy` keeps what they need.
package tools

import (
	_ "github.com/argoproj/argo-workflows/v3/cmd/argo"
	_ "github.com/argoproj/argo-workflows/v3/cmd/argoexec"
	_ "github.com/argoproj/argo-workflows/v3/cmd/workflow-controller"
)
