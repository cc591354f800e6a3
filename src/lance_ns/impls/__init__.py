"""One module (or package) per backend; imported lazily by lance_ns.config."""
