"""What ragate says: every sentence a verdict, a check, a run or a command writes, rendered
from typed values, one module a subject (`floors.py`, `slices.py`, `agreement.py`,
`baseline.py`, `sequential.py`, `rejudge.py`, `runs.py`; numbers and counts in
`numbers.py`). decision/ and the outputs render through it; scoring/ never imports it.
"""
