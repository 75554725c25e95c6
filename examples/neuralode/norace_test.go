//go:build !race

package main

const raceShort = false
