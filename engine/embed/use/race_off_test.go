//go:build !race

package use

const raceEnabled = false
