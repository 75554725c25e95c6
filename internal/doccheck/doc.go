// Package doccheck holds the module's documentation test: every package has
// a package comment and every exported identifier of every non-test file a
// doc comment (TestEveryExportedIdentifierDocumented). It has no code of its
// own.
package doccheck
