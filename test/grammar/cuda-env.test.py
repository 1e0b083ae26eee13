# SYNTAX TEST "source.python" "GPU Pilot: CUDA startup variables in Python strings and notebook magics"
"""A docstring that mentions CUDA_VISIBLE_DEVICES is prose: not marked."""
#                            ^^^^^^^^^^^^^^^^^^^^ - variable.other.constant.cuda-env.gpu-pilot
import os

os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
#           ^^^^^^^^^^^^^^^^^ source.python meta.item-access.python string.quoted.single.python variable.other.constant.cuda-env.gpu-pilot
#                                  ^^^^^^^^^^ string.quoted.single.python - variable.other.constant.cuda-env.gpu-pilot
os.environ["CUDA_VISIBLE_DEVICES"] = "1"  # CUDA_VISIBLE_DEVICES in a comment: not marked
#           ^^^^^^^^^^^^^^^^^^^^ string.quoted.single.python variable.other.constant.cuda-env.gpu-pilot
#                                           ^^^^^^^^^^^^^^^^^^^^ comment.line.number-sign.python - variable.other.constant.cuda-env.gpu-pilot
os.environ.setdefault('XLA_PYTHON_CLIENT_PREALLOCATE', 'false')
#                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ string.quoted.single.python variable.other.constant.cuda-env.gpu-pilot
os.environ.update({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "XLA_FLAGS": ""})
#                   ^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
#                                                                          ^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
os.putenv(b"TF_GPU_ALLOCATOR", b"cuda_malloc_async")
#           ^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
os.environ[r'TF_FORCE_GPU_ALLOW_GROWTH'] = "true"
#            ^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
device = f"cuda:{os.environ['CUDA_VISIBLE_DEVICES']}"
#                            ^^^^^^^^^^^^^^^^^^^^ meta.fstring.python string.quoted.single.python variable.other.constant.cuda-env.gpu-pilot
print(os.getenv("CUDA_MPS_PIPE_DIRECTORY"), os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"))
#                ^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
#                                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
env = {"PYTORCH_NVML_BASED_CUDA_CHECK": "1", "XLA_PYTHON_CLIENT_MEM_FRACTION": ".5", "XLA_CLIENT_MEM_FRACTION": ".5"}
#       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
#                                             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
#                                                                                     ^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
env["XLA_PYTHON_CLIENT_ALLOCATOR"] = "platform"
#    ^^^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
subprocess.run("CUDA_VISIBLE_DEVICES=0 python train.py $XLA_FLAGS", shell=False)
#               ^^^^^^^^^^^^^^^^^^^^ string.quoted.single.python variable.other.constant.cuda-env.gpu-pilot
#                                                      ^ meta.expansion.cuda-env.gpu-pilot punctuation.definition.variable.cuda-env.gpu-pilot
#                                                       ^^^^^^^^^ meta.expansion.cuda-env.gpu-pilot variable.other.constant.cuda-env.gpu-pilot
names = "MY_CUDA_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES_2 CUDA_VISIBLE_DEVICE"
#        ^^^^^^^^^^^^^^^^^^^^^^^ string.quoted.single.python - variable.other.constant.cuda-env.gpu-pilot
#                                ^^^^^^^^^^^^^^^^^^^^^^ string.quoted.single.python - variable.other.constant.cuda-env.gpu-pilot
#                                                       ^^^^^^^^^^^^^^^^^^^ string.quoted.single.python - variable.other.constant.cuda-env.gpu-pilot
CUDA_VISIBLE_DEVICES = 3
# <-------------------- constant.other.caps.python - variable.other.constant.cuda-env.gpu-pilot
%env CUDA_VISIBLE_DEVICES=1
# <- meta.magic.env.gpu-pilot support.function.magic.env.gpu-pilot punctuation.definition.magic.gpu-pilot
#^^^ meta.magic.env.gpu-pilot support.function.magic.env.gpu-pilot
#    ^^^^^^^^^^^^^^^^^^^^ meta.magic.env.gpu-pilot variable.other.constant.cuda-env.gpu-pilot
#                        ^ meta.magic.env.gpu-pilot keyword.operator.assignment.gpu-pilot
  %env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
#      ^^^^^^^^^^^^^^^^^^^^^^^ meta.magic.env.gpu-pilot variable.other.constant.cuda-env.gpu-pilot
!export CUDA_VISIBLE_DEVICES=0
# <- meta.shell-escape.gpu-pilot punctuation.definition.shell-escape.gpu-pilot
#^^^^^^ meta.shell-escape.gpu-pilot storage.modifier.export.shell
#       ^^^^^^^^^^^^^^^^^^^^ meta.shell-escape.gpu-pilot variable.other.constant.cuda-env.gpu-pilot
!CUDA_VISIBLE_DEVICES=0 python train.py
#^^^^^^^^^^^^^^^^^^^^ meta.shell-escape.gpu-pilot variable.other.constant.cuda-env.gpu-pilot
same = (a
     != b)
#    ^^ keyword.operator.comparison.python - meta.shell-escape.gpu-pilot
rest = a % env
#        ^ keyword.operator.arithmetic.python - meta.magic.env.gpu-pilot
%envx CUDA_VISIBLE_DEVICES
#     ^^^^^^^^^^^^^^^^^^^^ - variable.other.constant.cuda-env.gpu-pilot
