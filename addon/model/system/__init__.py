"""What the operating system gives this process: memory (:mod:`.memory`: a frame
range's estimate against what the process may use) and temporary folders
(:mod:`.scratch`: ones a killed run does not leave for good)."""
