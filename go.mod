module github.com/fuseboxhq/fusebox

go 1.26
