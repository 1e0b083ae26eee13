from network_trainer import NetworkTrainer
from options import Options


def main():
    opt = Options(is_train=True)
    opt.parse()

    trainer = NetworkTrainer(opt)
    trainer.set_gpu_device()
    trainer.set_seed()
    trainer.set_network()
    trainer.run()


if __name__ == "__main__":
    main()
