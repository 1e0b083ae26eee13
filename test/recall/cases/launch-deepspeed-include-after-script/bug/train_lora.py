"""LoRA supervised fine-tuning; the deepspeed launcher starts one process per GPU."""
import transformers


def main():
    parser = transformers.HfArgumentParser(transformers.Seq2SeqTrainingArguments)
    (training_args, extra) = parser.parse_args_into_dataclasses(return_remaining_strings=True)
    print("local rank", training_args.local_rank, "device", training_args.device, "extra", extra)


if __name__ == "__main__":
    main()
