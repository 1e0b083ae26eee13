# Issue 18 item 7: tab-indented blocks. The move fix (GPU001/GPU002) left `pass` indented with
# spaces in such a block (CPython: IndentationError / TabError; test/unit/server/engine/fixCompiles.test.ts);
# here GPU006 inserts a line in one.
import os
if True:
	if os.getuid():
		os.environ["CUDA_VISIBLE_DEVICES"] = "1"
	print(os.environ)
