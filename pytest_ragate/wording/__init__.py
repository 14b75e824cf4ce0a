"""What ragate says: every sentence a verdict, a check, a run or a command writes, rendered
from typed values, one module a subject (`floors.py`, `slices.py`, `agreement.py`,
`baseline.py`, `sequential.py`, `rejudge.py`, `runs.py`; numbers and counts in
`numbers.py`); what a verdict or a check says (decision/said.py's typed values), written
when its message is read (`said.py`). The outputs render through it; scoring/ and decision/
never import it.
"""
