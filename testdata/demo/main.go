package main

import "fmt"

// TODO: read the name from flags
func main() {
	fmt.Println(greet("world"))
}
