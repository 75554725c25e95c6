module github.com/adjointgo/adjoint

go 1.26
