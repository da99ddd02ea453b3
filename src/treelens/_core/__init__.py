"""The core: Tree and Forest as parallel arrays, routing, leaf boxes, float64
forests, validation, the chunk runner and the one cache of what is derived from
a Forest."""
