"""The lab's language: program text is parsed once with `ast` against a whitelist into a
Program (parse), which the interpreter runs on engine tensors."""
