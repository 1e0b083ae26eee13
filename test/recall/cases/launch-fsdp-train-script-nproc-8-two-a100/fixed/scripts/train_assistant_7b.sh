base_model=bigscience/bloomz-7b1-mt
max_len=2048
train_file=data/instructions.json
save_dir=checkpoints/assistant_7b/

torchrun \
  --nnodes=1 \
  --nproc_per_node=2 \
  --master_port=12375 \
  train.py \
  --model_name_or_path ${base_model} \
  --model_max_length ${max_len} \
  --data_path ${train_file} \
  --output_dir ${save_dir} \
  --bf16 True \
  --num_train_epochs 3 \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 8 \
  --learning_rate 2e-5 \
  --fsdp "full_shard auto_wrap" \
  --fsdp_transformer_layer_cls_to_wrap 'BloomBlock' \
  --gradient_checkpointing True
