#!/bin/bash
# usage: bash exps/finetune/mm/alpacaLlava_qformer_13B.sh <pretrained_dir> <llama_config> <tokenizer.model>
pretrained_path=$1
llama_config="$2 configs/model/finetune/llamaPeft_normBiasLora.json"
tokenizer_path="$3"
exp_name=finetune/mm/alpacaLlava_qformer_13B
mkdir -p output/"$exp_name"

torchrun --master_port=1112 --nproc_per_node=8 main_finetune.py \
    --output_dir output/"$exp_name" --epochs 3 --warmup_epochs 0.2 \
    --batch_size 16 --accum_iter 1 --num_workers 16 --max_words 512 \
    --lr 0.00005 --min_lr 0.000005 --weight_decay 0.02 \
    --llama_config $llama_config --tokenizer_path "$tokenizer_path" \
    --pretrained_path "$pretrained_path" --quant --only_save_trainable \
    2>&1 | tee -a output/"$exp_name"/output.log
