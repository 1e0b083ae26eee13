# SYNTAX TEST "source.shell" "GPU Pilot: CUDA startup variables in shell scripts"
export CUDA_DEVICE_ORDER=PCI_BUS_ID
# <------ storage.modifier.export.shell
#      ^^^^^^^^^^^^^^^^^ meta.expression.assignment.shell variable.other.assignment.shell variable.other.constant.cuda-env.gpu-pilot
#                       ^ keyword.operator.assignment.shell
  export CUDA_VISIBLE_DEVICES="0,1"
#        ^^^^^^^^^^^^^^^^^^^^ variable.other.assignment.shell variable.other.constant.cuda-env.gpu-pilot
#                             ^^^^^ string.quoted.double.shell
CUDA_VISIBLE_DEVICES=1 python train.py --epochs 3
# <-------------------- meta.expression.assignment.shell variable.other.assignment.shell variable.other.constant.cuda-env.gpu-pilot
#                   ^ keyword.operator.assignment.shell
#                      ^^^^^^ meta.statement.command.env.shell entity.name.command.shell
CUDA_VISIBLE_DEVICES=0 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" torchrun --nproc_per_node 1 train.py
# <-------------------- variable.other.constant.cuda-env.gpu-pilot
#                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.assignment.shell variable.other.constant.cuda-env.gpu-pilot
#                                                          ^^^^^^^^^^^^^^^^^^^^^^^ variable.other.assignment.shell variable.other.constant.cuda-env.gpu-pilot
#                                                                                  ^^^^^^^^^^^^^^^^^^^^^^^^^^ string.quoted.double.shell
#                                                                                                             ^^^^^^^^ entity.name.command.shell
readonly TF_GPU_ALLOCATOR=cuda_malloc_async TF_FORCE_GPU_ALLOW_GROWTH=true
# <-------- storage.modifier.readonly.shell
#        ^^^^^^^^^^^^^^^^ variable.other.assignment.shell variable.other.constant.cuda-env.gpu-pilot
#                                           ^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.assignment.shell variable.other.constant.cuda-env.gpu-pilot
env XLA_FLAGS=--xla_gpu_autotune_level=0 CUDA_MPS_PIPE_DIRECTORY=/tmp/mps python -c 'import jax'
# <--- entity.name.command.shell
#   ^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
#                                        ^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
echo "visible: $CUDA_VISIBLE_DEVICES" ${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.75} $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
#              ^ string.quoted.double.shell meta.expansion.cuda-env.gpu-pilot punctuation.definition.variable.cuda-env.gpu-pilot
#               ^^^^^^^^^^^^^^^^^^^^ string.quoted.double.shell meta.expansion.cuda-env.gpu-pilot variable.other.constant.cuda-env.gpu-pilot
#                                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
#                                                                     ^^ keyword.operator.expansion.shell
#                                                                              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ meta.expansion.cuda-env.gpu-pilot variable.other.constant.cuda-env.gpu-pilot
if [ -z "${PYTORCH_NVML_BASED_CUDA_CHECK}" ]; then unset XLA_CLIENT_MEM_FRACTION XLA_PYTHON_CLIENT_ALLOCATOR; fi
#          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ string.quoted.double.shell variable.other.constant.cuda-env.gpu-pilot
#                                                        ^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
#                                                                                ^^^^^^^^^^^^^^^^^^^^^^^^^^^ variable.other.constant.cuda-env.gpu-pilot
# export CUDA_VISIBLE_DEVICES=3 in a comment: not marked
#        ^^^^^^^^^^^^^^^^^^^^ comment.line.number-sign.shell - variable.other.constant.cuda-env.gpu-pilot
MY_CUDA_VISIBLE_DEVICES=2 CUDA_VISIBLE_DEVICE=1 ./run.sh
# <----------------------- variable.other.assignment.shell - variable.other.constant.cuda-env.gpu-pilot
#                         ^^^^^^^^^^^^^^^^^^^ - variable.other.constant.cuda-env.gpu-pilot
