package checkpoint

// Coupling is coupling (revolve_test.go), the additive coupling block and
// its inverse, for the tests of package checkpoint_test.
var Coupling = coupling
