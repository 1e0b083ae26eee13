# Issue 18 item 7: the write continues the line above through a backslash, at an indentation of
# its own; a line inserted above it by GPU006 made CPython raise IndentationError.
import os
if True:
    y = 0; \
  os.environ["CUDA_VISIBLE_DEVICES"] = "1"
print(y)
