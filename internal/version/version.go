// Package version holds ember's version string.
package version

// Version is ember's release version; "-dev" marks a build from a checkout.
const Version = "0.1.0-dev"
